// Anchors the precompiled header shared by the ATen-side tests.
