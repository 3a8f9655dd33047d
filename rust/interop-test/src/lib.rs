//! Empty: the test is tests/interop.rs.
