package io.quorumkv.service.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;

import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md is exactly what the configuration metadata says: change the
 * Javadoc of a {@code *Properties} record, and this fails until the document is
 * regenerated with {@code -Dquorumkv.update-docs=true} (or
 * {@link ConfigurationReference#main}).
 */
class ConfigurationReferenceTest {

	@Test
	void documentMatchesTheMetadata() throws IOException {
		String expected = ConfigurationReference.render(Files.readString(ConfigurationReference.METADATA));
		if (Boolean.getBoolean("quorumkv.update-docs")) {
			Files.writeString(ConfigurationReference.DOCUMENT, expected);
		}
		assertThat(expected).contains("`quorumkv.cluster.secret`", "`quorumkv.storage.lsm.memtable-size`",
				"| `64MB` |");
		assertThat(Files.readString(ConfigurationReference.DOCUMENT))
			.as("docs/configuration.md differs from the configuration metadata; regenerate it: "
					+ "./mvnw -pl service -am verify -Dtest=ConfigurationReferenceTest "
					+ "-Dsurefire.failIfNoSpecifiedTests=false -Dquorumkv.update-docs=true")
			.isEqualTo(expected);
	}

}
