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
	void readsBothVersionsAndWritesTheCurrentOne() {
		assertThat(this.footer.version()).isEqualTo(TableFormat.CURRENT).isEqualTo(2);
		Footer v1 = new Footer(this.footer.index(), this.footer.bloom(), this.footer.properties(), 7, 8,
				TableFormat.VERSION_1);
		assertThat(Footer.decode(v1.encode(), 6_000_000_000L)).isEqualTo(v1);
		Footer v3 = new Footer(this.footer.index(), this.footer.bloom(), this.footer.properties(), 7, 8, 3);
		assertThatThrownBy(() -> Footer.decode(v3.encode(), 6_000_000_000L)).hasMessageContaining("version 3");
	}

	@Test
	void aHandleMustLeaveRoomForItsTrailerOfItsVersion() {
		// The properties block ends 4 bytes before the footer: room for a version-1
		// trailer, not for a version-2 one.
		long fileSize = 1_000 + 4 + Footer.ENCODED_SIZE;
		BlockHandle last = new BlockHandle(900, 100);
		BlockHandle small = new BlockHandle(0, 10);
		assertThat(Footer.decode(new Footer(small, small, last, 1, 1, TableFormat.VERSION_1).encode(), fileSize))
			.isNotNull();
		assertThatThrownBy(() -> Footer.decode(new Footer(small, small, last, 1, 1).encode(), fileSize))
			.hasMessageContaining("out of bounds");
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
