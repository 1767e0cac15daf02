/**
 * The prompt a chat completion sends the model. tbench's generators have no chat template (the bundled
 * char_generator is a character model), so the messages are rendered by one fixed, documented template:
 * each message as `<role>: <content>`, joined by a space, then `assistant:` for the answer to come. A
 * space, not a newline, separates turns because the bundled tokenizer has no newline token: a newline in
 * a message's own content is the model's to accept or refuse, like any other character. Content is a
 * string or an array of text parts (joined); images, audio, files and tool calls are refused by name.
 */
import { invalidRequest } from "./openai-error.js";

/** The roles a message may have; `developer` is OpenAI's newer name for `system`. */
const ROLES: ReadonlySet<string> = new Set(["system", "developer", "user", "assistant"]);
/** What the rendered prompt ends with: the turn the model writes. */
export const ASSISTANT_CUE = "assistant:";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The text of one message's `content`: a string, or text parts joined. */
function contentText(content: Json | undefined, at: string): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part, i) => {
        if (!isObject(part) || typeof part.type !== "string") {
          throw invalidRequest(
            `Invalid '${at}[${i}]': expected a content part object with a 'type'.`,
            at,
            "invalid_type",
          );
        }
        if (part.type !== "text") {
          throw invalidRequest(
            `Content parts of type '${part.type}' are not supported: tbench-server's models read text only.`,
            `${at}[${i}].type`,
            "unsupported_value",
          );
        }
        if (typeof part.text !== "string") {
          throw invalidRequest(
            `Invalid '${at}[${i}].text': expected a string.`,
            `${at}[${i}].text`,
            "invalid_type",
          );
        }
        return part.text;
      })
      .join("");
  }
  throw invalidRequest(`Invalid '${at}': expected a string or an array of text parts.`, at, "invalid_type");
}

/** Renders `messages` (the request's member, unchecked) into the prompt, or refuses it naming the field. */
export function renderChatPrompt(messages: Json | undefined): string {
  if (messages === undefined || messages === null) {
    throw invalidRequest("Missing required parameter: 'messages'.", "messages", "missing_required_parameter");
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalidRequest(
      "Invalid 'messages': expected a non-empty array of messages.",
      "messages",
      "invalid_value",
    );
  }
  const turns = messages.map((message, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) throw invalidRequest(`Invalid '${at}': expected an object.`, at, "invalid_type");
    const role = message.role;
    if (role === "tool" || role === "function") {
      throw invalidRequest(
        `Messages with role '${role}' are not supported: tbench-server has no tool calling.`,
        `${at}.role`,
        "unsupported_value",
      );
    }
    if (typeof role !== "string" || !ROLES.has(role)) {
      throw invalidRequest(
        `Invalid '${at}.role': expected one of system, developer, user, assistant, got ${JSON.stringify(role)?.slice(0, 64)}.`,
        `${at}.role`,
        "invalid_value",
      );
    }
    for (const key of ["tool_calls", "function_call", "audio"]) {
      const value = message[key];
      if (value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)) {
        throw invalidRequest(
          `'${at}.${key}' is not supported by tbench-server.`,
          `${at}.${key}`,
          "unsupported_parameter",
        );
      }
    }
    // An assistant turn may leave content out (OpenAI allows it beside tool calls): an empty turn here.
    const content =
      role === "assistant" && (message.content === undefined || message.content === null)
        ? ""
        : contentText(message.content, `${at}.content`);
    return `${role}: ${content}`;
  });
  turns.push(ASSISTANT_CUE);
  return turns.join(" ");
}
