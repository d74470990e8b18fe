// dynworkflow's workspace-write policy for Pi: the write and edit tools may
// change files inside the working directory only (symbolic links resolved).
import { realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { homedir } from "node:os";

function real(p) {
	// The deepest existing ancestor, resolved; the rest appended.
	let head = p, tail = "";
	for (;;) {
		try {
			return resolve(realpathSync(head), tail);
		} catch {
			const up = dirname(head);
			if (up === head) return p;
			tail = tail ? head.slice(up.length + 1) + sep + tail : head.slice(up.length + 1);
			head = up;
		}
	}
}

export default function (pi) {
	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "write" && event.toolName !== "edit") return undefined;
		let p = String(event.input?.path ?? "");
		if (p.startsWith("@")) p = p.slice(1);
		if (p === "~" || p.startsWith("~/")) p = homedir() + p.slice(1);
		const root = real(resolve(ctx.cwd));
		const target = real(isAbsolute(p) ? p : resolve(ctx.cwd, p));
		const rel = relative(root, target);
		if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
			return { block: true, reason: `dynworkflow workspace-write: ${event.input?.path} is outside the working directory ${root}; only files inside it may be changed` };
		}
		return undefined;
	});
}
