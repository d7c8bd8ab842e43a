/**
 * The H2 storage backend: H2 in file mode through Spring Data R2DBC, r2dbc-h2 and a
 * bounded r2dbc-pool. The one public entry type is
 * {@link io.quorumkv.storage.h2.H2Storage}.
 */
@NullMarked
package io.quorumkv.storage.h2;

import org.jspecify.annotations.NullMarked;
