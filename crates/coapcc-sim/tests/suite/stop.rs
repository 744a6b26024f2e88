//! Stopping runs from outside ([`coapcc_sim::stop`]): a set flag stops every
//! network's run inside its event loop, an unset one changes nothing.

use std::sync::atomic::AtomicBool;

use coapcc_sim::dumbbell;
use coapcc_sim::dumbbell::Scenario;
use coapcc_sim::grid;
use coapcc_sim::network::SimNetwork;
use coapcc_sim::star;
use coapcc_sim::stop::{cancelled, CHECK_EVERY};
use coapcc_sim::NetworkScenario;

fn parse<T: serde::de::DeserializeOwned>(text: &str) -> T {
    toml::from_str(text).unwrap()
}

/// A flag set before the start stops each network's run at its first
/// check, deep inside the event loop, however long the run would be.
#[test]
fn a_set_flag_stops_every_network_at_its_first_check() {
    let stop = AtomicBool::new(true);
    let expected = format!("cancelled after {CHECK_EVERY} events");
    let dumbbell: Scenario = parse(
        "clients = 2000\n[workload]\nkind = \"continuous\"\nexchanges = 1000\n\
         [[algorithm]]\nname = \"default\"\n",
    );
    let e = dumbbell::Sim::run_stoppable(&dumbbell.run_spec(0), 0, &stop).unwrap_err();
    assert_eq!(e.0, expected);
    let grid: grid::Scenario = parse(
        "[network]\nkind = \"grid\"\n[workload]\nperiod_s = 0.001\n\
         [[algorithm]]\nname = \"default\"\n",
    );
    let e = grid::Sim::run_stoppable(&grid.run_spec(0), 0, &stop).unwrap_err();
    assert_eq!(e.0, expected);
    let star: star::Scenario = parse(
        "[network]\nkind = \"star\"\n[workload]\nsample_s = 0.0001\n\
         [[algorithm]]\nname = \"tcp\"\n",
    );
    let e = star::Sim::run_stoppable(&star.run_spec(0), 0, &stop).unwrap_err();
    assert_eq!(e.0, expected);
    // A scenario stops before its runs start.
    let e = coapcc_sim::run_scenario_stoppable(&dumbbell, &|| {}, &stop).unwrap_err();
    assert_eq!(e, cancelled());
}

#[test]
fn an_unset_flag_changes_nothing() {
    let s: Scenario = parse(
        "clients = 20\n[workload]\nkind = \"continuous\"\nexchanges = 5\n\
         [[algorithm]]\nname = \"cocoa\"\n",
    );
    let stop = AtomicBool::new(false);
    let a = dumbbell::Sim::run_stoppable(&s.run_spec(0), 1, &stop).unwrap();
    let b = dumbbell::Sim::run(&s.run_spec(0), 1).unwrap();
    assert_eq!(a, b);
}
