// Runs a wasm32-wasip1 program under Node's WASI (Node 20 or later), as scripts/cross-check does:
//   node scripts/wasi-run.mjs PROGRAM.wasm ARGS...
// The host's root folder is the program's `/`, so absolute paths mean what they mean outside; give
// the program absolute paths (WASI has no current directory of the host's). The exit code is the
// program's.
import { readFile } from 'node:fs/promises';
import { argv, env, exit } from 'node:process';
import { WASI } from 'node:wasi';

const [program, ...args] = argv.slice(2);
if (program === undefined) {
  console.error('usage: node scripts/wasi-run.mjs PROGRAM.wasm ARGS...');
  exit(2);
}
const wasi = new WASI({ version: 'preview1', args: [program, ...args], env, preopens: { '/': '/' }, returnOnExit: false });
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
// With returnOnExit the program's exit unwinds through its frames as a JavaScript exception, which
// crashed Node 20 (a segmentation fault after `phalanx demo` had printed everything); without it,
// the WASI exit call ends the process with the program's code.
wasi.start(instance);
