package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * The server's self-delimiting range format ({@code Accept: application/x-ndjson}): one
 * JSON object per line, {@code {"key":"<base64>","value":"<base64>","version":"<hex>"}}.
 * Lines may span HTTP chunks; keys and values may hold any bytes.
 */
final class NdjsonFormat implements ScanFormat {

	static final NdjsonFormat INSTANCE = new NdjsonFormat();

	private static final Pattern RECORD = Pattern
		.compile("\\{\"key\":\"([A-Za-z0-9+/=]*)\",\"value\":\"([A-Za-z0-9+/=]*)\",\"version\":\"[0-9a-f]+\"}");

	private NdjsonFormat() {
	}

	@Override
	public @Nullable String accept() {
		return "application/x-ndjson";
	}

	@Override
	public Flux<KeyValue> decode(URI node, Flux<ByteBuf> chunks) {
		return Flux.defer(() -> {
			Lines lines = new Lines();
			return chunks.concatMapIterable(lines::feed)
				.concatWith(Flux.defer(() -> lines.isEmpty() ? Flux.empty()
						: Flux.error(unexpected(node, "the range ended inside a record"))))
				.map((line) -> parse(node, line));
		});
	}

	private static KeyValue parse(URI node, String line) {
		Matcher matcher = RECORD.matcher(line);
		if (!matcher.matches()) {
			throw unexpected(node,
					"a range record is not of the NDJSON format: " + line.substring(0, Math.min(line.length(), 80)));
		}
		Base64.Decoder base64 = Base64.getDecoder();
		return new KeyValue(new String(base64.decode(matcher.group(1)), StandardCharsets.UTF_8),
				base64.decode(matcher.group(2)));
	}

	private static UnexpectedResponseException unexpected(URI node, String what) {
		return new UnexpectedResponseException(Operation.SCAN + " at " + node + ": " + what, node, 200, null);
	}

	/** Splits the body into lines across chunks; what follows the last newline waits. */
	private static final class Lines {

		private final StringBuilder partial = new StringBuilder();

		List<String> feed(ByteBuf chunk) {
			List<String> lines = new ArrayList<>();
			// The format is ASCII: a byte is a char.
			String text = chunk.toString(StandardCharsets.US_ASCII);
			int from = 0;
			for (int newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', from)) {
				this.partial.append(text, from, newline);
				lines.add(this.partial.toString());
				this.partial.setLength(0);
				from = newline + 1;
			}
			this.partial.append(text, from, text.length());
			return lines;
		}

		boolean isEmpty() {
			return this.partial.isEmpty();
		}

	}

}
