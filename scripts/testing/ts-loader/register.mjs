// For `node --import`: registers the test TypeScript loader (see hooks.mjs).
import { register } from "./api.mjs";

register();
