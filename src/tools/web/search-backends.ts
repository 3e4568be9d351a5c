/**
 * The search services web_search can ask, one object each: how to build the
 * request and how to read the answer. Adding a backend is adding one here.
 */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchRequest {
  url: URL;
  headers: Record<string, string>;
}

export interface SearchBackend {
  readonly name: string;
  request(query: string, count: number): SearchRequest;
  /** The results in the decoded JSON answer; throws with a short reason when its shape is not the expected one. */
  parse(body: unknown): SearchResult[];
}

export const BRAVE_DEFAULT_URL = "https://api.search.brave.com/res/v1/web/search";

/** SearXNG's JSON API: `GET {base}/search?q=…&format=json` → `results[].title/url/content`. */
export function searxngBackend(baseUrl: string): SearchBackend {
  // "http://host/searx" and "http://host/searx/" both mean the instance at /searx/.
  const base = new URL(baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
  return {
    name: "searxng",
    request(query) {
      const url = new URL("search", base);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      return { url, headers: { accept: "application/json" } };
    },
    parse(body) {
      const results = field(body, "results");
      if (!Array.isArray(results)) throw new Error('no "results" array (is format=json enabled in the instance\'s settings.yml?)');
      return results.map((r) => ({ title: text(field(r, "title")), url: text(field(r, "url")), snippet: text(field(r, "content")) }));
    },
  };
}

/** Brave Search API: `GET {url}?q=…&count=…` with `X-Subscription-Token` → `web.results[].title/url/description`. */
export function braveBackend(endpoint: string, apiKey: string): SearchBackend {
  return {
    name: "brave",
    request(query, count) {
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      // Brave's limit per request.
      url.searchParams.set("count", String(Math.min(count, 20)));
      return { url, headers: { accept: "application/json", "x-subscription-token": apiKey } };
    },
    parse(body) {
      if (typeof body !== "object" || body === null) throw new Error("the answer is not a JSON object");
      // Brave leaves "web" out when nothing matched.
      const web = field(body, "web");
      if (web === undefined) return [];
      const results = field(web, "results");
      if (!Array.isArray(results)) throw new Error('no "web.results" array');
      return results.map((r) => ({
        title: plain(text(field(r, "title"))),
        url: text(field(r, "url")),
        snippet: plain(text(field(r, "description"))),
      }));
    },
  };
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#x27": "'", nbsp: " " };

/** Brave marks matches with <strong> and escapes entities; the model wants the words. */
function plain(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&(amp|lt|gt|quot|#39|#x27|nbsp);/g, (_m, name: string) => ENTITIES[name]!);
}
