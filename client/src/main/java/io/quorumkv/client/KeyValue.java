package io.quorumkv.client;

import java.util.Arrays;
import java.util.Objects;

/**
 * One record of a range scan: a key and its value. The value array is copied in and out,
 * so a record cannot be changed after it was made; equality is by content.
 *
 * @param key the key
 * @param value the value's exact bytes
 */
public record KeyValue(String key, byte[] value) {

	public KeyValue {
		Objects.requireNonNull(key, "key");
		value = Objects.requireNonNull(value, "value").clone();
	}

	@Override
	public byte[] value() {
		return this.value.clone();
	}

	// A record compares arrays by identity; a record of a scan is a value (STYLE rule
	// 13's
	// exception for arrays, as storage-api's Entry).
	@Override
	public boolean equals(Object other) {
		return other instanceof KeyValue that && this.key.equals(that.key) && Arrays.equals(this.value, that.value);
	}

	@Override
	public int hashCode() {
		return 31 * this.key.hashCode() + Arrays.hashCode(this.value);
	}

	@Override
	public String toString() {
		return "KeyValue[key=" + this.key + ", value=" + this.value.length + " bytes]";
	}

}
