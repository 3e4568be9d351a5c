/**
 * The pre-parse scan that refuses frames too deep or batches too long: it
 * must agree with JSON on what is inside a string (brackets, commas, escaped
 * quotes and backslashes) and work the same on text and on UTF-8 bytes.
 */
import { describe, expect, it } from "vitest";
import { frameShapeProblem } from "../../src/rpc/frame-limits.js";

const both = (text: string, depth = 3, batch = 2) => {
  const fromText = frameShapeProblem(text, depth, batch);
  expect(frameShapeProblem(Buffer.from(text, "utf8"), depth, batch)).toEqual(fromText);
  return fromText;
};

describe("frameShapeProblem", () => {
  it("counts nesting outside strings only", () => {
    expect(both('[[[1]]]')).toBeUndefined();
    expect(both('[[[[1]]]]')).toEqual({ limit: "maxDepth" });
    expect(both('{"a":"[[[[[[{{{{"}')).toBeUndefined();
    expect(both('{"a":{"b":{"c":{}}}}')).toEqual({ limit: "maxDepth" });
  });

  it("treats escaped quotes and backslashes as JSON does", () => {
    // The string is: ab\"[[[[  — the quote is escaped, so the brackets are still inside it.
    expect(both(String.raw`{"s":"ab\"[[[[","t":1}`)).toBeUndefined();
    // The string is: ab\\  — an escaped backslash, then the string ends: the brackets after it count.
    expect(both(String.raw`{"s":"ab\\","t":[[[1]]]}`)).toEqual({ limit: "maxDepth" });
    expect(both(String.raw`["\\\"[[[[[["]`)).toBeUndefined();
  });

  it("counts batch members at the top level only, commas in strings and nested values aside", () => {
    expect(both('[{"a":[1,2,3,4]},{"b":"x,y,z"}]')).toBeUndefined();
    expect(both('[1,2,3]')).toEqual({ limit: "maxBatch", members: "more than 2" });
    expect(both('{"a":1,"b":2,"c":3}')).toBeUndefined();
  });

  it("reads multi-byte UTF-8 and leaves malformed text to JSON.parse", () => {
    expect(both('["é[[[[","漢字","\u{1F600}"]', 3, 5)).toBeUndefined();
    expect(both('["unterminated [[[[[[')).toBeUndefined();
  });

  it("refuses 5 million nested arrays, as bytes and as text", () => {
    const deep = "[".repeat(5_000_000) + "]".repeat(5_000_000);
    expect(frameShapeProblem(deep, 64, 100)).toEqual({ limit: "maxDepth" });
    expect(frameShapeProblem(Buffer.from(deep), 64, 100)).toEqual({ limit: "maxDepth" });
  });
});
