// validate.js: check GLB files with the Khronos glTF validator (npm
// gltf-validator, unpacked by scripts/test.sh): prints each file's errors
// and warnings and exits non-zero when a file has an error or a warning.
//   node test/glb/validate.js VALIDATOR_DIR FILE.glb...
'use strict';
const fs = require('fs');
const path = require('path');

const validator = require(path.resolve(process.argv[2]));
const files = process.argv.slice(3);

(async () => {
	let bad = 0;
	for (const file of files) {
		const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), { maxIssues: 0 });
		const issues = report.issues;
		for (const m of issues.messages.filter((m) => m.severity <= 1))
			console.log(`${path.basename(file)}: ${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer || ''}: ${m.message}`);
		const info = report.info || {};
		console.log(`${path.basename(file)}: ${issues.numErrors} errors, ${issues.numWarnings} warnings, ` +
			`${info.drawCallCount} draw calls, ${info.totalVertexCount} vertices, ${info.totalTriangleCount} triangles`);
		if (issues.numErrors > 0 || issues.numWarnings > 0)
			bad++;
	}
	process.exit(bad > 0 ? 1 : 0);
})().catch((e) => {
	console.error(e);
	process.exit(2);
});
