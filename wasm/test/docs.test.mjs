// The JavaScript examples of docs/playground.md run as written (from the repository root).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

test("docs/playground.md: the js blocks run", () => {
  const page = readFileSync(`${root}docs/playground.md`, "utf8");
  const blocks = [...page.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length > 0);
  const file = `${root}.docs-example.mjs`;
  writeFileSync(file, blocks.join("\n"));
  try {
    execFileSync("node", [file], { cwd: root, stdio: "pipe" });
  } finally {
    rmSync(file);
  }
});
