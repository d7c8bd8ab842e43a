package io.quorumkv.service.config;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The {@code quorumkv.http.*} settings: limits of the public API; requests over them get
 * a 4xx or a 503, never an out-of-memory error. They bind here, at the ground, rather
 * than in {@code http} because the largest key and body bound every layer that carries an
 * entry: the storage checks its backend holds such keys, and the replica streams,
 * transfers and repair size their frames by them.
 *
 * @param maxBodySize largest accepted PUT body (413 above)
 * @param maxKeySize largest accepted key in bytes after decoding (400 above)
 * @param maxInFlight public requests served at once; more get 503 with Retry-After
 * @param maxBufferedBodies request body bytes held in memory at once, over all requests;
 * more get 503 with Retry-After
 * @param readTimeout a request whose body stops arriving for this long is answered 408
 * and its connection closed
 * @param idleTimeout a connection with no request under way is closed after this long
 * without a byte from its client
 */
@ConfigurationProperties("quorumkv.http")
public record HttpProperties(@DefaultValue("4MB") DataSize maxBodySize, @DefaultValue("1KB") DataSize maxKeySize,
		@DefaultValue("1024") int maxInFlight, @DefaultValue("256MB") DataSize maxBufferedBodies,
		@DefaultValue("30s") Duration readTimeout, @DefaultValue("60s") Duration idleTimeout) {

	public HttpProperties {
		if (maxBodySize.toBytes() < 1 || maxBodySize.toBytes() > Integer.MAX_VALUE - 64) {
			throw new IllegalArgumentException("quorumkv.http.max-body-size must be between 1B and 2GB");
		}
		if (maxKeySize.toBytes() < 1 || maxKeySize.toBytes() > 65_536) {
			throw new IllegalArgumentException("quorumkv.http.max-key-size must be between 1B and 64KB");
		}
		if (maxInFlight < 1) {
			throw new IllegalArgumentException("quorumkv.http.max-in-flight must be at least 1");
		}
		if (maxBufferedBodies.toBytes() < maxBodySize.toBytes()) {
			throw new IllegalArgumentException(
					"quorumkv.http.max-buffered-bodies must be at least quorumkv.http.max-body-size");
		}
		if (readTimeout.isNegative() || readTimeout.isZero()) {
			throw new IllegalArgumentException("quorumkv.http.read-timeout must be positive");
		}
		if (idleTimeout.isNegative() || idleTimeout.isZero()) {
			throw new IllegalArgumentException("quorumkv.http.idle-timeout must be positive");
		}
	}

}
