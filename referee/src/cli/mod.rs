//! The commands of the referee (`hus match`, `hus replay`'s command line, `hus
//! check-bot`, `hus perft`, `hus line`, `hus random-bot`) and their clap arguments.

pub(crate) mod args;
pub(crate) mod check_bot;
pub(crate) mod line_cmd;
pub(crate) mod match_cmd;
pub(crate) mod match_config;
pub(crate) mod perft_cmd;
pub(crate) mod random_bot;
pub(crate) mod replay_cmd;
