//! The dashboard's pages, rendered on the server: the standings (`/`, with the
//! cross-table, the recent sets and the workers), a bot (`/bots/NAME`), a pair
//! (`/bots/A?vs=B`), a set (`/sets/SET`), the archive (`/sets`) and the workers are
//! complete HTML without scripts (for `curl`, a text browser, or a browser with scripts
//! off). `app.js` then keeps them live: it puts in place the rows the live stream
//! brings as results arrive (`web::feed`), fetches the same page again at most once a
//! minute for the rest, and draws the live games.
//!
//! The HTML is built with `maud`: its `html!` macro escapes every value put into text
//! or an attribute, so bot-supplied text (names, commands, fault details, stderr) is
//! always text. No inline script or style: the pages' content policy (`web::CSP`)
//! forbids them; every look is a class of `app.css`.
//!
//! This module renders; the handlers that fill and send its pages are `web`'s, and
//! nothing here calls into `web`. The frame of every page (`frame`: `page`,
//! `Status`), the pages' addresses (`links`) and the cells every page uses (`cells`);
//! then by page: [`standings`] (with the cross-table), [`bot`], [`pair`] (head to
//! head), [`sets`] (a list of sets, a set's page), [`archive`], [`workers`], [`replay`]
//! (the links on a replay page); [`versions`], an uploaded bot's versions and one version; [`compare`], the rating fit's answer for a pair
//! (difference, likelihood, settled or open); [`figures`], the charts.

pub mod archive;
pub mod bot;
mod cells;
pub mod compare;
pub mod figures;
mod frame;
mod links;
pub mod pair;
pub mod replay;
pub mod sets;
pub mod standings;
#[cfg(test)]
pub(crate) mod test_data;
pub mod versions;
pub mod workers;

pub use archive::{archive_main, ArchiveQuery, Outcome, Page, ARCHIVE_SETS};
pub use bot::{bot_main, bot_main_with, move_time_bins};
pub use compare::{compare_in, pair_class, percent, Comparison, PairIndex};
pub use figures::history_charts;
pub use frame::{page, Status};
pub use links::{bot_href, pair_href, replay_href, set_href};
pub use pair::pair_main;
pub use replay::replay_nav;
pub use sets::{set_main, set_row, sets_table, Feed};
pub use standings::{cross_table, rating_order, standings_main, standings_row, standings_table};
pub use workers::workers_main;
