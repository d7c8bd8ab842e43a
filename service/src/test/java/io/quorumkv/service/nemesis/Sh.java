package io.quorumkv.service.nemesis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a system command (ip, nft, kill, mount) with a bound, and tells how it went. */
final class Sh {

	record Result(int exit, String output) {

		boolean ok() {
			return this.exit == 0;
		}

	}

	private Sh() {
	}

	static Result run(String... command) {
		return run(List.of(command));
	}

	static Result run(List<String> command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			process.getOutputStream().close();
			if (!process.waitFor(20, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				return new Result(-1, String.join(" ", command) + ": no answer within 20 s");
			}
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
			return new Result(process.exitValue(), output);
		}
		catch (IOException ex) {
			return new Result(-1, String.join(" ", command) + ": " + ex.getMessage());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Result(-1, "interrupted");
		}
	}

	/** Runs a command that must succeed. */
	static String must(String... command) {
		Result result = run(command);
		if (!result.ok()) {
			throw new IllegalStateException(
					String.join(" ", command) + " failed (" + result.exit() + "): " + result.output());
		}
		return result.output();
	}

	/** Whether a program is on the PATH. */
	static boolean has(String program) {
		return run("sh", "-c", "command -v " + program).ok();
	}

}
