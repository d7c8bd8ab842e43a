/**
 * Membership: keeping every node's ring in step (ring exchange), agreeing on ring
 * changes, and carrying them out (streaming, handover, cleanup). See docs/membership.md.
 */
@NullMarked
package io.quorumkv.service.membership;

import org.jspecify.annotations.NullMarked;
