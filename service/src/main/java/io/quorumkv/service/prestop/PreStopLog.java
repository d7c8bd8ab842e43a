package io.quorumkv.service.prestop;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jspecify.annotations.Nullable;

/**
 * The program's log: one line per decision or failure, on standard output (which the
 * kubelet shows in a {@code FailedPreStopHook} event when the program fails) and, when
 * {@code QKV_PRESTOP_LOG} names a file that can be opened, there too: the container's own
 * output ({@code /proc/1/fd/1}) puts the lines in {@code kubectl logs}. Kept in memory
 * for tests.
 */
final class PreStopLog {

	private final PrintStream out;

	private final @Nullable OutputStream copy;

	private final List<String> lines = new CopyOnWriteArrayList<>();

	PreStopLog(PrintStream out, @Nullable String file) {
		this.out = out;
		OutputStream opened = null;
		if (file != null && !file.isBlank()) {
			try {
				opened = new FileOutputStream(file, true);
			}
			catch (IOException | SecurityException ex) {
				out.println(
						line("cannot write the log to " + file + " (" + ex.getMessage() + "): standard output only"));
			}
		}
		this.copy = opened;
	}

	void info(String message) {
		String line = line(message);
		this.lines.add(message);
		this.out.println(line);
		this.out.flush();
		OutputStream target = this.copy;
		if (target != null) {
			try {
				target.write((line + "\n").getBytes(StandardCharsets.UTF_8));
				target.flush();
			}
			catch (IOException ex) {
				// The copy is a convenience: standard output has the line.
			}
		}
	}

	/** Every message logged so far (tests). */
	List<String> lines() {
		return List.copyOf(this.lines);
	}

	private static String line(String message) {
		return Instant.now() + " quorumkv pre-stop: " + message;
	}

}
