package io.quorumkv.service.cluster;

/**
 * A timestamp from another node that is further ahead of this node's wall clock than
 * {@code quorumkv.cluster.max-clock-skew}: refused, never adopted. On the internal API it
 * is answered 422 with {@code X-QuorumKV-Refused: clock-skew}.
 */
public class ClockSkewException extends RuntimeException {

	private final long aheadMicros;

	public ClockSkewException(String message, long aheadMicros) {
		super(message, null, false, false);
		this.aheadMicros = aheadMicros;
	}

	/** How far ahead of the local wall clock the timestamp was. */
	public long aheadMicros() {
		return this.aheadMicros;
	}

}
