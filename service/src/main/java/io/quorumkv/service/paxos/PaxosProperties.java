package io.quorumkv.service.paxos;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Conditional writes ({@link Paxos}).
 *
 * @param timeout the longest a conditional write or a serial read tries before it is
 * answered 504
 * @param grace how long an acceptor keeps a key's row after it was last used and its
 * accepted value is committed; above twice {@code quorumkv.paxos.timeout} plus twice
 * {@code quorumkv.cluster.max-clock-skew} (checked at start)
 * @param maxRows the most keys the acceptor table holds at once (beyond it, this node
 * promises nothing for a new key; a majority of the others still decides)
 * @param maxBytes the largest acceptor table, at most 12MB (it is rewritten whole when
 * its log has grown past it)
 */
@ConfigurationProperties("quorumkv.paxos")
public record PaxosProperties(@DefaultValue("5s") Duration timeout, @DefaultValue("1m") Duration grace,
		@DefaultValue("100000") int maxRows, @DefaultValue("8MB") DataSize maxBytes) {

	public PaxosProperties {
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("quorumkv.paxos.timeout must be positive");
		}
		if (grace.isNegative() || grace.isZero()) {
			throw new IllegalArgumentException("quorumkv.paxos.grace must be positive");
		}
		if (maxRows < 1) {
			throw new IllegalArgumentException("quorumkv.paxos.max-rows must be positive");
		}
		if (maxBytes.toBytes() < 1024 || maxBytes.toBytes() > AcceptorTable.MAX_BYTES) {
			throw new IllegalArgumentException("quorumkv.paxos.max-bytes must be from 1KB to 12MB");
		}
	}

}
