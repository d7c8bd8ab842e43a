package io.quorumkv.storage.lsm.sstable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The codecs of data blocks: round trips, and stored bytes that do not decode. */
class BlockCodecTest {

	private static byte[] compressible() {
		StringBuilder text = new StringBuilder();
		for (int i = 0; text.length() < 4096; i++) {
			text.append("{\"user\":")
				.append(i)
				.append(",\"name\":\"user-")
				.append(i % 17)
				.append("\",\"active\":true}\n");
		}
		return text.toString().getBytes(StandardCharsets.UTF_8);
	}

	@ParameterizedTest
	@EnumSource(value = BlockCodec.class, names = { "LZ4", "ZSTD" })
	void compressibleBlocksRoundTripAndRandomOnesAreLeftRaw(BlockCodec codec) {
		byte[] raw = compressible();
		byte[] stored = codec.compress(raw);
		assertThat(stored).isNotNull();
		assertThat(stored.length).isLessThan(raw.length / 2);
		assertThat(ByteBuffer.wrap(stored).getInt()).as("the raw length first").isEqualTo(raw.length);
		assertThat(codec.decompress(stored)).isEqualTo(raw);
		byte[] random = new byte[4096];
		new Random(1).nextBytes(random);
		assertThat(codec.compress(random)).as("not an eighth saved: stored raw").isNull();
		assertThat(BlockCodec.byId(codec.id())).isSameAs(codec);
	}

	@ParameterizedTest
	@EnumSource(value = BlockCodec.class, names = { "LZ4", "ZSTD" })
	void storedBytesThatDoNotDecodeToTheirDeclaredLengthAreRejected(BlockCodec codec) {
		byte[] raw = compressible();
		byte[] stored = codec.compress(raw);
		for (int cut = 0; cut < stored.length; cut += Math.max(1, stored.length / 50)) {
			byte[] truncated = Arrays.copyOf(stored, cut);
			assertThatThrownBy(() -> codec.decompress(truncated)).as("cut at %d", cut)
				.isInstanceOf(Block.BlockFormatException.class);
		}
		for (int declared : new int[] { 0, -1, raw.length - 1, raw.length + 1, BlockCodec.MAX_RAW_LENGTH + 1 }) {
			byte[] lying = stored.clone();
			ByteBuffer.wrap(lying).putInt(0, declared);
			assertThatThrownBy(() -> codec.decompress(lying)).as("declared %d", declared)
				.isInstanceOf(Block.BlockFormatException.class);
		}
	}

	@ParameterizedTest
	@EnumSource(BlockCodec.class)
	void noneStoresAsIsAndIdsAreStable(BlockCodec codec) {
		assertThat(codec.id()).isEqualTo(codec.ordinal());
		assertThat(BlockCodec.NONE.compress(compressible())).isNull();
		assertThat(BlockCodec.NONE.decompress(new byte[] { 1, 2 })).containsExactly(1, 2);
		assertThat(BlockCodec.byId(3)).isNull();
	}

}
