/**
 * A generator's tokenizer, read from plain data in the model's directory (`tokenizer.json`):
 * `{"type": "characters", "vocabulary": ["</s>", " ", "a", ...], "eos_token_id": 0}`. Text becomes token ids
 * by the longest vocabulary entry that matches at each position (one character per token for a character
 * vocabulary); a character no entry starts is refused, naming it. Ids become text by concatenating their
 * entries; the end-of-sequence token is never part of the text.
 */
import { z } from "zod";

/** Most vocabulary entries a tokenizer file may hold, and the longest entry: bounded before any use. */
const MAX_VOCABULARY = 1 << 20;
const MAX_ENTRY_LENGTH = 256;

const tokenizerSchema = z
  .object({
    type: z.literal("characters"),
    vocabulary: z.array(z.string().max(MAX_ENTRY_LENGTH)).min(2).max(MAX_VOCABULARY),
    eos_token_id: z.number().int().nonnegative(),
  })
  .strict();

export interface Tokenizer {
  /** How many token ids there are (the step model's logits width). */
  readonly vocabularySize: number;
  readonly eosTokenId: number;
  /** The ids of `text`; throws an Error naming the first character no token covers. */
  encode(text: string): number[];
  /** The text of one token (empty for end-of-sequence). */
  decode(id: number): string;
}

/** Builds a tokenizer from the parsed JSON of its file; throws an Error saying what is wrong with it. */
export function createTokenizer(json: unknown): Tokenizer {
  const parsed = tokenizerSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue?.path.join(".") || "tokenizer"}: ${issue?.message ?? "invalid"}`);
  }
  const { vocabulary, eos_token_id: eos } = parsed.data;
  if (eos >= vocabulary.length) {
    throw new Error(`eos_token_id ${eos} is not an id of the ${vocabulary.length}-entry vocabulary`);
  }
  const ids = new Map<string, number>();
  let longest = 1;
  for (const [id, entry] of vocabulary.entries()) {
    if (id === eos || entry === "") continue;
    if (ids.has(entry)) throw new Error(`vocabulary entry ${JSON.stringify(entry)} appears twice`);
    ids.set(entry, id);
    longest = Math.max(longest, entry.length);
  }
  return {
    vocabularySize: vocabulary.length,
    eosTokenId: eos,
    encode(text) {
      const out: number[] = [];
      let at = 0;
      while (at < text.length) {
        let matched = 0;
        for (let length = Math.min(longest, text.length - at); length > 0; length--) {
          const id = ids.get(text.slice(at, at + length));
          if (id !== undefined) {
            out.push(id);
            matched = length;
            break;
          }
        }
        if (matched === 0) {
          const char = String.fromCodePoint(text.codePointAt(at)!);
          throw new Error(`the tokenizer has no token for ${JSON.stringify(char)} (at character ${at})`);
        }
        at += matched;
      }
      return out;
    },
    decode: (id) => (id === eos ? "" : (vocabulary[id] ?? "")),
  };
}
