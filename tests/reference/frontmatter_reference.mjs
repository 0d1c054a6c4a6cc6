#!/usr/bin/env node
/**
 * frontmatter_reference.mjs — how pi 0.84.2 reads the frontmatter of skill files, and which of
 * them its skill loader loads.
 *
 * Usage: node frontmatter_reference.mjs SKILLS_DIR
 * Prints {"files": {path: {"frontmatter": value} | {"error": message}}, "skills": {path: {name,
 * description, disableModelInvocation}}} for every SKILL.md one folder below SKILLS_DIR: the
 * result of pi's own parseFrontmatter (utils/frontmatter.js, the `yaml` package) and of
 * loadSkillsFromDir. Nothing is written. The reference side of
 * tests/conformance/test_frontmatter_against_pi.py.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_PACKAGE_DIR =
	process.env.PI_REFERENCE_PI_DIR ??
	fileURLToPath(new URL("./node_modules/@earendil-works/pi-coding-agent/", import.meta.url));

const [skillsDir] = process.argv.slice(2);
if (!skillsDir) {
	process.stderr.write("usage: frontmatter_reference.mjs SKILLS_DIR\n");
	process.exit(1);
}
// The yaml package warns on stderr about unresolved tags; that is not an answer.
process.removeAllListeners("warning");
process.on("warning", () => {});
const { parseFrontmatter } = await import(pathToFileURL(`${PI_PACKAGE_DIR}dist/utils/frontmatter.js`).href);
const pi = await import(pathToFileURL(`${PI_PACKAGE_DIR}dist/index.js`).href);

const files = {};
for (const folder of readdirSync(skillsDir).sort()) {
	const path = join(skillsDir, folder, "SKILL.md");
	try {
		files[path] = { frontmatter: parseFrontmatter(readFileSync(path, "utf-8")).frontmatter };
	} catch (error) {
		files[path] = { error: error instanceof Error ? error.message : String(error) };
	}
}
const skills = {};
for (const skill of pi.loadSkillsFromDir({ dir: skillsDir, source: "project" }).skills) {
	skills[skill.filePath] = {
		name: skill.name,
		description: skill.description,
		disableModelInvocation: skill.disableModelInvocation,
	};
}
process.stdout.write(JSON.stringify({ files, skills }));
