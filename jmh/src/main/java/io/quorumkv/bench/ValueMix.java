package io.quorumkv.bench;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Values of a realistic mix for the compression benchmark, the same for one seed:
 * <ul>
 * <li>50% JSON documents of 200 to 1,500 bytes (a user or an order: repeated field names,
 * ids, short words, numbers, timestamps, small arrays);</li>
 * <li>30% text of 100 to 600 bytes (log lines and sentences from a vocabulary of 64
 * words);</li>
 * <li>20% random bytes of 64 to 512 (what compresses no further: tokens, hashes, images,
 * encrypted or already compressed blobs).</li>
 * </ul>
 * About 590 bytes a value on average.
 */
final class ValueMix {

	private static final String[] WORDS = { "the", "request", "user", "order", "payment", "session", "cache", "node",
			"replica", "write", "read", "failed", "succeeded", "timeout", "retry", "account", "item", "price",
			"shipping", "address", "city", "country", "status", "pending", "complete", "cancelled", "token", "login",
			"logout", "profile", "image", "upload", "download", "queue", "worker", "job", "started", "finished",
			"error", "warning", "info", "debug", "latency", "bytes", "seconds", "client", "server", "version", "update",
			"delete", "create", "list", "search", "result", "page", "limit", "offset", "total", "count", "value", "key",
			"event", "stream", "batch" };

	private static final String[] LEVELS = { "INFO", "WARN", "DEBUG", "ERROR" };

	private ValueMix() {
	}

	/** Value number {@code i} of the mix. */
	static byte[] value(long seed, int i) {
		SplittableRandom random = new SplittableRandom(seed * 1_000_003L + i);
		int kind = random.nextInt(10);
		if (kind < 5) {
			return json(random, i, 200 + random.nextInt(1_300));
		}
		if (kind < 8) {
			return text(random, 100 + random.nextInt(500));
		}
		byte[] bytes = new byte[64 + random.nextInt(448)];
		random.nextBytes(bytes);
		return bytes;
	}

	private static byte[] json(SplittableRandom random, int i, int size) {
		StringBuilder out = new StringBuilder(size + 64);
		out.append("{\"id\":").append(i).append(",\"type\":\"").append(random.nextBoolean() ? "user" : "order");
		out.append("\",\"created\":\"2026-").append(1 + random.nextInt(12)).append('-').append(1 + random.nextInt(28));
		out.append("T").append(random.nextInt(24)).append(':').append(random.nextInt(60)).append(":00Z\"");
		out.append(",\"name\":\"").append(word(random)).append(' ').append(word(random)).append('"');
		out.append(",\"email\":\"").append(word(random)).append(random.nextInt(10_000)).append("@example.com\"");
		out.append(",\"active\":").append(random.nextBoolean()).append(",\"items\":[");
		for (int n = 0; out.length() < size - 40; n++) {
			if (n > 0) {
				out.append(',');
			}
			out.append("{\"sku\":\"SKU-")
				.append(random.nextInt(100_000))
				.append("\",\"qty\":")
				.append(1 + random.nextInt(9));
			out.append(",\"price\":").append(random.nextInt(50_000) / 100.0).append(",\"tag\":\"").append(word(random));
			out.append("\"}");
		}
		return out.append("]}").toString().getBytes(StandardCharsets.UTF_8);
	}

	private static byte[] text(SplittableRandom random, int size) {
		StringBuilder out = new StringBuilder(size + 32);
		while (out.length() < size) {
			out.append("2026-11-").append(10 + random.nextInt(18)).append(' ').append(random.nextInt(24)).append(':');
			out.append(random.nextInt(60)).append(' ').append(LEVELS[random.nextInt(LEVELS.length)]).append(' ');
			int words = 4 + random.nextInt(10);
			for (int w = 0; w < words; w++) {
				out.append(word(random)).append(' ');
			}
			out.append("id=").append(random.nextInt(1_000_000)).append('\n');
		}
		return out.toString().getBytes(StandardCharsets.UTF_8);
	}

	private static String word(SplittableRandom random) {
		return WORDS[random.nextInt(WORDS.length)];
	}

}
