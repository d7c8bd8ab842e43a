package io.quorumkv.service.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code scripts/qkv} run as an operator runs it, with the admin key of {@link TestKeys}
 * and a 10 s timeout per call.
 */
public final class Qkv {

	public static final Path SCRIPT = Path.of("..", "scripts", "qkv").toAbsolutePath().normalize();

	private Qkv() {
	}

	/** What a run printed (standard output and errors together) and its exit status. */
	public record Result(int exit, String output) {
	}

	/** Runs {@code qkv ARGS} to its end (at most 5 minutes). */
	public static Result run(String... args) throws IOException, InterruptedException {
		Process process = start(args);
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(300, TimeUnit.SECONDS)).isTrue();
		return new Result(process.exitValue(), output);
	}

	/**
	 * Starts {@code qkv ARGS} and returns at once; its output is the process's input
	 * stream.
	 */
	public static Process start(String... args) {
		List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString(), "--timeout", "10"));
		command.addAll(List.of(args));
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		builder.environment().put("QKV_ADMIN_KEY", TestKeys.ADMIN);
		try {
			return builder.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
