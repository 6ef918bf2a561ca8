//! mwdump (being written).
