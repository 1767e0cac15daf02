/**
 * zod's English messages, passed to each parse (`{ error: ZOD_ENGLISH }`) rather than set in zod's global
 * configuration: zod/mini, which the browser entry uses, loads no locale by itself (its messages would all
 * be "Invalid input"), and a library should not change an application's zod settings.
 */
import type * as core from "zod/v4/core";
import english from "zod/v4/locales/en.js";

/** zod's English error map. */
export const ZOD_ENGLISH: core.$ZodErrorMap = english().localeError;
