package io.quorumkv.usage;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

import io.quorumkv.client.BlockingQuorumKvClient;
import io.quorumkv.client.QuorumKvClient;

/**
 * A program as a user writes one: it writes a key to the cluster at the seed it is given,
 * reads it back and prints it. It is built against client-bom and client alone, and run
 * from source with client-all alone:
 *
 * <pre>
 * java -cp client-all.jar client-usage/src/main/java/io/quorumkv/usage/Hello.java http://127.0.0.1:8081
 * </pre>
 */
public final class Hello {

	private Hello() {
	}

	public static void main(String[] args) {
		if (args.length != 1) {
			System.err.println("usage: Hello <seed URL>");
			System.exit(2);
		}
		try (QuorumKvClient client = QuorumKvClient.builder().seeds(args[0]).build()) {
			BlockingQuorumKvClient kv = client.blocking();
			kv.put("hello", "world".getBytes(StandardCharsets.UTF_8));
			Optional<byte[]> value = kv.get("hello");
			System.out
				.println("hello = " + value.map((bytes) -> new String(bytes, StandardCharsets.UTF_8)).orElse("?"));
		}
	}

}
