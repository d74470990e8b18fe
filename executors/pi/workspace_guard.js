// dynworkflow's workspace-write policy for Pi: the write and edit tools may
// change files inside the working directory only, and not the files there
// that make programs run (a repository's .git, Pi's .pi, the agent CLIs'
// and dynworkflow's own configuration).
//
// The decision is made on the path the write will really reach: every
// symbolic link on the way is followed, a dangling one included (writing
// through it creates its target), and the parts that do not exist yet are
// taken as they are.
import { lstatSync, readlinkSync } from "node:fs";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { homedir } from "node:os";

// protectedNames are the entries that may not be written at any depth.
const protectedNames = new Set([".git", ".pi", ".claude", ".codex", ".dynworkflow", ".mcp.json"]);

const maxLinks = 40;

// physical resolves an absolute path as the kernel will when the write
// opens it. It throws when it cannot tell (a loop, a component it may not
// look at): the write is then refused.
function physical(p) {
	let todo = p.split(sep).filter((c) => c !== "");
	let done = sep;
	let links = 0;
	while (todo.length > 0) {
		const c = todo.shift();
		if (c === ".") continue;
		if (c === "..") {
			done = dirname(done);
			continue;
		}
		const next = join(done, c);
		let st = null;
		try {
			st = lstatSync(next);
		} catch (err) {
			if (err.code !== "ENOENT" && err.code !== "ENOTDIR") throw err;
		}
		if (st !== null && st.isSymbolicLink()) {
			if (++links > maxLinks) throw new Error("too many symbolic links");
			const target = readlinkSync(next);
			todo = target.split(sep).filter((c) => c !== "").concat(todo);
			if (isAbsolute(target)) done = sep;
			continue;
		}
		done = next;
	}
	return done;
}

// decide returns why a write of path from the working directory cwd is
// refused, or "" when it may go ahead.
function decide(cwd, path) {
	let p = String(path ?? "");
	if (p.startsWith("@")) p = p.slice(1);
	if (p === "~" || p.startsWith("~/")) p = homedir() + p.slice(1);
	let root, target;
	try {
		root = physical(resolve(cwd));
		target = physical(isAbsolute(p) ? p : resolve(cwd, p));
	} catch (err) {
		return `dynworkflow workspace-write: cannot tell where ${path} leads (${err.message}); only files inside the working directory may be changed`;
	}
	const prefix = root === sep ? sep : root + sep;
	if (!target.startsWith(prefix)) {
		return `dynworkflow workspace-write: ${path} is outside the working directory ${root}; only files inside it may be changed`;
	}
	for (const c of target.slice(prefix.length).split(sep)) {
		if (protectedNames.has(c.toLowerCase())) {
			return `dynworkflow workspace-write: ${path} is in ${c}, whose files make programs run; it may not be changed by an agent`;
		}
	}
	return "";
}

export default function (pi) {
	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "write" && event.toolName !== "edit") return undefined;
		const reason = decide(ctx.cwd, event.input?.path);
		return reason === "" ? undefined : { block: true, reason };
	});
}
