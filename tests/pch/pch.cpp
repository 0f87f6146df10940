// The translation unit that builds the tests' precompiled header
// (tests/CMakeLists.txt, TENFERRO_TEST_PCH); it has no code of its own.
