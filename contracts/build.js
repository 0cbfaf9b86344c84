// Compiles contracts/src/*.sol with solc-js (pinned in package.json) and writes
// contracts/bytecode.json: contract name → deployed (runtime) bytecode, hex. Deterministic:
// no metadata hash, fixed optimizer settings. `node build.js --check` fails if the committed
// file differs from a fresh compilation.
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const srcDir = path.join(__dirname, "src");
const sources = {};
for (const file of fs.readdirSync(srcDir).filter((f) => f.endsWith(".sol")).sort()) {
  sources[file] = { content: fs.readFileSync(path.join(srcDir, file), "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "cancun",
    metadata: { bytecodeHash: "none", appendCBOR: false },
    outputSelection: { "*": { "*": ["evm.deployedBytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  console.error(errors.map((e) => e.formattedMessage).join("\n"));
  process.exit(1);
}
const result = { compiler: solc.version(), contracts: {} };
for (const file of Object.keys(output.contracts).sort()) {
  for (const name of Object.keys(output.contracts[file]).sort()) {
    const code = output.contracts[file][name].evm.deployedBytecode.object;
    if (code.length > 0) result.contracts[name] = "0x" + code;
  }
}
const text = JSON.stringify(result, null, 2) + "\n";
const target = path.join(__dirname, "bytecode.json");
if (process.argv.includes("--check")) {
  const committed = fs.readFileSync(target, "utf8");
  if (committed !== text) {
    console.error("contracts/bytecode.json differs from a fresh compilation: run `node contracts/build.js`");
    process.exit(1);
  }
  console.log("contracts/bytecode.json matches a fresh compilation (" + result.compiler + ")");
} else {
  fs.writeFileSync(target, text);
  console.log("wrote " + target + " (" + Object.keys(result.contracts).length + " contracts, " + result.compiler + ")");
}
