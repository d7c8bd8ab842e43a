package io.quorumkv.bench;

import java.nio.charset.StandardCharsets;

import io.quorumkv.storage.Keys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class KeySpaceTests {

	private final KeySpace keySpace = new KeySpace(1_000_000);

	@Test
	void keysAreSixteenBytesOfZeroPaddedDecimal() {
		assertThat(new String(this.keySpace.present(12345), StandardCharsets.US_ASCII)).isEqualTo("k000000000123450");
		assertThat(new String(this.keySpace.absent(12345), StandardCharsets.US_ASCII)).isEqualTo("k000000000123455");
		assertThat(this.keySpace.value(3)).hasSize(KeySpace.VALUE_SIZE);
	}

	@Test
	void anAbsentKeySortsBetweenTwoPresentOnes() {
		assertThat(Keys.compare(this.keySpace.present(41), this.keySpace.absent(41))).isNegative();
		assertThat(Keys.compare(this.keySpace.absent(41), this.keySpace.present(42))).isNegative();
		assertThat(Keys.compare(this.keySpace.present(999_999), this.keySpace.present(1_000))).isPositive();
	}

	@Test
	void indexesOutsideTheKeySpaceAreRefused() {
		assertThatExceptionOfType(IndexOutOfBoundsException.class).isThrownBy(() -> this.keySpace.present(1_000_000));
	}

}
