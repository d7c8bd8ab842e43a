package io.quorumkv.service.repair;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

/**
 * A range of the token space: keys whose token ({@link #token}: XXH3-64 of the key, the
 * hash placement uses, as a signed long) lies in {@code start..end}, both inclusive.
 *
 * @param start the first token of the range
 * @param end the last token, {@code >= start}
 */
public record TokenRange(long start, long end) {

	private static final Hasher64 XXH3 = Hashing.xxh3_64();

	private static final BigInteger SPACE = BigInteger.ONE.shiftLeft(64);

	public TokenRange {
		if (end < start) {
			throw new IllegalArgumentException("token range ends before it starts: " + start + ".." + end);
		}
	}

	/** The key's position in the token space. */
	public static long token(byte[] key) {
		return XXH3.hashBytesToLong(key);
	}

	/** The whole token space cut into {@code count} ranges of (nearly) equal width. */
	public static List<TokenRange> split(int count) {
		if (count < 1 || count > 1 << 16) {
			throw new IllegalArgumentException("range count must be 1..65536, was " + count);
		}
		List<TokenRange> ranges = new ArrayList<>(count);
		BigInteger min = BigInteger.valueOf(Long.MIN_VALUE);
		for (int i = 0; i < count; i++) {
			long start = min.add(SPACE.multiply(BigInteger.valueOf(i)).divide(BigInteger.valueOf(count))).longValue();
			long end = min.add(SPACE.multiply(BigInteger.valueOf(i + 1)).divide(BigInteger.valueOf(count)))
				.subtract(BigInteger.ONE)
				.longValue();
			ranges.add(new TokenRange(start, end));
		}
		return List.copyOf(ranges);
	}

	public boolean contains(long token) {
		return token >= this.start && token <= this.end;
	}

	/** The number of tokens minus one, unsigned: {@code 2^64 - 1} for the whole space. */
	long span() {
		return this.end - this.start;
	}

	@Override
	public String toString() {
		return "[" + Long.toHexString(this.start) + ".." + Long.toHexString(this.end) + "]";
	}

}
