package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

import io.quorumkv.storage.Entry;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

/**
 * How the records of a range are written.
 * <ul>
 * <li>{@link #NDJSON} (the default, {@code application/x-ndjson}): one JSON object per
 * line, {@code {"key":"<base64>","value":"<base64>","version":"<hex>"}}, self-delimiting
 * whatever the bytes; the version is the one a GET shows as {@code ETag}.</li>
 * <li>{@link #RECORDS} ({@code Accept: application/octet-stream}, the first releases'
 * default, kept for their clients): one chunk per record, the key bytes, {@code \n}, the
 * value bytes. Only a client that sees chunk boundaries can split it when a key or value
 * holds {@code \n}.</li>
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

	/**
	 * The format an {@code Accept} header (parsed by Spring) asks for, by RFC 9110
	 * §12.5.1: each format takes the quality of the most specific media range that
	 * includes it, the higher quality wins, and {@link #NDJSON} wins a tie (the default).
	 * No header, or one that names neither format, not even by a wildcard, is
	 * {@link #NDJSON} (the header is disregarded, as RFC 9110 allows).
	 * @throws ApiException (406) when the header refuses both, with {@code q=0}
	 */
	static ScanFormat accepted(List<MediaType> accept) {
		if (accept.isEmpty()) {
			return NDJSON;
		}
		double records = quality(accept, RECORDS.mediaType);
		double ndjson = quality(accept, NDJSON.mediaType);
		if (records == 0 && ndjson == 0) {
			throw new ApiException(HttpStatus.NOT_ACCEPTABLE, "a range is sent as " + RECORDS.mediaType + " or "
					+ NDJSON.mediaType + "; the Accept header refuses both");
		}
		return (records > ndjson) ? RECORDS : NDJSON;
	}

	/**
	 * The quality of the most specific of {@code accept} that includes {@code type}: 0
	 * when refused ({@code q=0}), -1 when none includes it.
	 */
	private static double quality(List<MediaType> accept, MediaType type) {
		int specificity = -1;
		double quality = -1;
		for (MediaType range : accept) {
			if (range.includes(type)) {
				int rank = range.isWildcardType() ? 0 : range.isWildcardSubtype() ? 1 : 2;
				if (rank > specificity) {
					specificity = rank;
					quality = range.getQualityValue();
				}
			}
		}
		return quality;
	}

}
