package io.quorumkv.storage.lsm.sstable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FooterTest {

	private final Footer footer = new Footer(new BlockHandle(5_000_000_000L, 100), new BlockHandle(10, 20),
			new BlockHandle(5_000_000_200L, 40), 123_456_789L, -42);

	@Test
	void roundTripsWithLongOffsets() {
		byte[] encoded = this.footer.encode();
		assertThat(encoded).hasSize(Footer.ENCODED_SIZE);
		assertThat(Footer.decode(encoded, 6_000_000_000L)).isEqualTo(this.footer);
	}

	@Test
	void rejectsBadMagicChecksumVersionAndHandles() {
		byte[] encoded = this.footer.encode();
		byte[] magic = encoded.clone();
		magic[Footer.ENCODED_SIZE - 1] ^= 1;
		assertThatThrownBy(() -> Footer.decode(magic, 6_000_000_000L)).hasMessageContaining("magic");
		byte[] flipped = encoded.clone();
		flipped[3] ^= 1;
		assertThatThrownBy(() -> Footer.decode(flipped, 6_000_000_000L)).hasMessageContaining("checksum");
		assertThatThrownBy(() -> Footer.decode(encoded, 1_000)).hasMessageContaining("out of bounds");
	}

}
