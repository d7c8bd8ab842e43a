package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * The server's default range format: every record is one HTTP chunk holding the key's
 * bytes, {@code \n}, and the value's bytes. A value may contain {@code \n} and zero bytes
 * (the chunk's length delimits it); a key is split at the chunk's first {@code \n}, so a
 * key that itself contains {@code \n} cannot be told apart in this format (a
 * self-delimiting format will lift that, see {@link ScanFormat}).
 */
final class RecordChunkFormat implements ScanFormat {

	static final RecordChunkFormat INSTANCE = new RecordChunkFormat();

	private RecordChunkFormat() {
	}

	@Override
	public @Nullable String accept() {
		return null;
	}

	@Override
	public Flux<KeyValue> decode(URI node, Flux<ByteBuf> chunks) {
		return chunks.filter(ByteBuf::isReadable).handle((chunk, sink) -> {
			int separator = chunk.indexOf(chunk.readerIndex(), chunk.writerIndex(), (byte) '\n');
			if (separator < 0) {
				sink.error(new UnexpectedResponseException(
						Operation.SCAN + " at " + node + ": a record of " + chunk.readableBytes() + " bytes has no key",
						node, 200, null));
				return;
			}
			String key = chunk.toString(chunk.readerIndex(), separator - chunk.readerIndex(), StandardCharsets.UTF_8);
			byte[] value = new byte[chunk.writerIndex() - separator - 1];
			chunk.getBytes(separator + 1, value);
			sink.next(new KeyValue(key, value));
		});
	}

}
