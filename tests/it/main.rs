//! Integration tests: the app on port 0 against a real redis-server and a real SQL database.

mod admin;
mod faults;
mod harness;
mod reads;
mod sync;
mod votes;
