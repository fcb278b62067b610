// Runs a documentation page's TypeScript block: TypeScript's own compiler turns it
// into an ES module (transpileModule: syntax checked, types stripped, not type-checked),
// and Node runs that module. The block's file must sit in a directory whose
// node_modules holds the packages (tests/node's, linked).
//
//   node run-typescript.mjs BLOCK.ts
import { readFileSync, writeFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
import ts from "typescript"

const [source] = process.argv.slice(2)
const compiled = ts.transpileModule(readFileSync(source, "utf8"), {
  fileName: source,
  reportDiagnostics: true,
  compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
})
const problems = compiled.diagnostics ?? []
if (problems.length > 0) {
  for (const problem of problems) {
    console.error(ts.flattenDiagnosticMessageText(problem.messageText, "\n"))
  }
  process.exit(2)
}
const target = source.replace(/\.ts$/, ".mjs")
writeFileSync(target, compiled.outputText)
await import(pathToFileURL(target).href)
