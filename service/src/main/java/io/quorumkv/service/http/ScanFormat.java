package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

import io.quorumkv.storage.Entry;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;

/**
 * How the records of a range are written.
 * <ul>
 * <li>{@link #RECORDS} (the default, {@code application/octet-stream}): one chunk per
 * record, the key bytes, {@code \n}, the value bytes. Only a client that sees chunk
 * boundaries can split it when a key or value holds {@code \n}.</li>
 * <li>{@link #NDJSON} ({@code Accept: application/x-ndjson}): one JSON object per line,
 * {@code {"key":"<base64>","value":"<base64>","version":"<hex>"}}, self-delimiting
 * whatever the bytes; the version is the one a GET shows as {@code ETag}.</li>
 * </ul>
 */
enum ScanFormat {

	RECORDS(MediaType.APPLICATION_OCTET_STREAM) {
		@Override
		DataBuffer encode(Entry entry) {
			byte[] key = entry.key();
			byte[] value = entry.value();
			DataBuffer buffer = DefaultDataBufferFactory.sharedInstance.allocateBuffer(key.length + 1 + value.length);
			return buffer.write(key).write((byte) '\n').write(value);
		}
	},

	NDJSON(MediaType.APPLICATION_NDJSON) {
		@Override
		DataBuffer encode(Entry entry) {
			Base64.Encoder base64 = Base64.getEncoder();
			String line = "{\"key\":\"" + base64.encodeToString(entry.key()) + "\",\"value\":\""
					+ base64.encodeToString(entry.value()) + "\",\"version\":\"" + Versions.version(entry) + "\"}\n";
			return DefaultDataBufferFactory.sharedInstance.wrap(line.getBytes(StandardCharsets.US_ASCII));
		}
	};

	private final MediaType mediaType;

	ScanFormat(MediaType mediaType) {
		this.mediaType = mediaType;
	}

	MediaType mediaType() {
		return this.mediaType;
	}

	/** One live record (never a tombstone) as it goes on the wire. */
	abstract DataBuffer encode(Entry entry);

	/** The format an {@code Accept} header asks for: NDJSON when it names it. */
	static ScanFormat accepted(List<MediaType> accept) {
		for (MediaType type : accept) {
			if (type.isCompatibleWith(MediaType.APPLICATION_NDJSON) && !type.isWildcardType()
					&& !type.isWildcardSubtype()) {
				return NDJSON;
			}
		}
		return RECORDS;
	}

}
