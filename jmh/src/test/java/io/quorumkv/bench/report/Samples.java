package io.quorumkv.bench.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** The recorded outputs under src/test/resources/io/quorumkv/bench/report. */
final class Samples {

	private Samples() {
	}

	static String read(String name) {
		try (InputStream in = Samples.class.getResourceAsStream(name)) {
			if (in == null) {
				throw new IllegalArgumentException("No test resource " + name);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
