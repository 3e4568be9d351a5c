/**
 * The providers' names, default endpoint and hint: plain data, no zod. The
 * command line and the model calls read them on the start path;
 * config-providers.ts builds the providers' schemas with them and re-exports
 * them.
 */

/** The provider of the environment's endpoint (OPENAI_BASE_URL, `llm`): where a bare model name goes unless `defaultProvider` says otherwise. */
export const ENV_PROVIDER_NAME = "default";
/** Where the `default` provider points when no base URL is configured (OPENAI_BASE_URL, llm.baseUrl): OpenAI's API. */
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

export const PROVIDER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Appended to the error of an `apiKeyEnv` naming an unset variable (the `llm` section's and a
 * provider's): the usual cause is an example written for a keyed endpoint copied for a keyless one.
 */
export const KEYLESS_HINT = " (an endpoint that takes no key, such as Ollama, needs no apiKeyEnv: leave it out)";
