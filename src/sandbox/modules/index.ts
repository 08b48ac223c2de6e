/**
 * Pure-JavaScript modules tenant code may `require`, by name, as source evaluated inside the isolate
 * (CommonJS: `module`, `exports`, `require`). The reactor SDK is built into the prelude because the host
 * must recognize its errors; modules added here are plain data.
 */
export const MODULE_SOURCES: Record<string, string> = {};
