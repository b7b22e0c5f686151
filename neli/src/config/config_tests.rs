//! The configuration's unit tests: defaults, each validation rule and its
//! message, the derived bounds, redaction.

use super::validate::default_name;
use super::*;

fn base() -> ConfigBuilder {
    Config::builder().bootstrap_servers("127.0.0.1:9092").group("g")
}

#[test]
fn defaults_follow_goneli() {
    let r = base().build().unwrap().resolve().unwrap();
    assert_eq!(r.topic, "g.neli");
    assert_eq!(r.heartbeat_timeout, Duration::from_secs(5));
    assert_eq!(r.session_timeout, Duration::from_secs(15));
    assert_eq!(r.min_poll_interval, Duration::from_millis(100));
    assert_eq!(r.kafka_config["session.timeout.ms"], "15000");
    let parts: Vec<&str> = r.name.rsplitn(3, '_').collect();
    assert_eq!(parts.len(), 3, "name is host_pid_unix: {}", r.name);
    assert_eq!(parts[1], std::process::id().to_string());
}

// A resigner stays out for 2 S + T (neli/KAFKA.md "Resign"): the others
// rejoin within S, the coordinator may hold the rebalance another S,
// then the successor needs T for its evidence. S + T lost that race
// beside a CPU hog (kafka_mock::resigning_leader_hands_over_and_stays_out).
#[test]
fn resign_hold_off_covers_a_held_rebalance_and_the_successors_evidence() {
    let c = base().heartbeat_timeout(Duration::from_secs(1)).session_timeout(Duration::from_secs(3)).build();
    let r = c.unwrap().resolve().unwrap();
    assert_eq!(r.core(1).resign_hold_off, Duration::from_secs(7));
}

#[test]
fn default_group_is_the_binary_name() {
    let r = Config::builder().build().unwrap().resolve().unwrap();
    assert!(r.group_id.starts_with("neli"), "{}", r.group_id);
}

#[test]
fn forced_keys_are_refused_by_name() {
    for key in FORCED_KEYS {
        let err = base().kafka(*key, "x").build().unwrap_err();
        assert_eq!(err.to_string(), format!("cannot override configuration '{key}'"));
    }
}

#[test]
fn bad_group_and_topic_names_name_the_field_and_rule() {
    let err = base().group("bad group").build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "group 'bad group' is invalid: may contain only ASCII letters, digits, '.', '_' and '-'"
    );
    let err = base().topic("..").build().unwrap_err();
    assert_eq!(err.to_string(), "topic '..' is invalid: must not be '.' or '..'");
    let err = base().name("a\nb").build().unwrap_err();
    assert!(err.to_string().starts_with("name 'a\nb' is invalid"), "{err}");
}

#[test]
fn zero_intervals_are_refused() {
    let err = base().heartbeat_timeout(Duration::ZERO).build().unwrap_err();
    assert_eq!(err, ConfigError::Zero { field: "heartbeat_timeout", value: Duration::ZERO });
    let err = base().min_poll_interval(Duration::ZERO).build().unwrap_err();
    assert!(err.to_string().starts_with("min_poll_interval must be greater than zero"));
    let err = base().kafka("session.timeout.ms", "abc").build().unwrap_err();
    assert_eq!(err.to_string(), "session.timeout.ms 'abc' is not a whole number of milliseconds");
}

#[test]
fn exclusive_mode_needs_lease_below_session() {
    // Reference: NELI §3 — exclusivity needs the lease to end before the
    // group can hand the partition to someone else.
    let err = base().heartbeat_timeout(Duration::from_secs(6)).session_timeout(Duration::from_secs(6)).build();
    let msg = err.unwrap_err().to_string();
    assert!(msg.starts_with("heartbeat_timeout (6s) must be below session.timeout.ms (6s) in exclusive mode"), "{msg}");
    assert!(base().heartbeat_timeout(Duration::from_secs(5)).session_timeout(Duration::from_secs(6)).build().is_ok());
}

#[test]
fn multi_role_exclusive_mode_needs_lease_below_session() {
    // Exclusive multi-role leases obey the same rule as one role: a role's
    // lease must end before the group can hand its partition on.
    let multi = Mode::MultiRole { roles: 4, partitions: 2, exclusive: true };
    let six = Duration::from_secs(6);
    let err = base().mode(multi).heartbeat_timeout(six).session_timeout(six).build().unwrap_err();
    assert_eq!(err, ConfigError::ExclusiveLeaseTooLong { t: six, s: six });
    let just_below = base().mode(multi).heartbeat_timeout(six - Duration::from_millis(1)).session_timeout(six);
    assert!(just_below.build().is_ok());
}

#[test]
fn non_exclusive_mode_refuses_lease_equal_to_session() {
    let multi = Mode::MultiRole { roles: 4, partitions: 2, exclusive: false };
    let three = Duration::from_secs(3);
    let err = base().mode(multi).heartbeat_timeout(three).session_timeout(three).build().unwrap_err();
    assert_eq!(err, ConfigError::NonExclusiveLeaseTooShort { t: three, s: three });
}

#[test]
fn non_exclusive_mode_needs_lease_above_session() {
    let multi = Mode::MultiRole { roles: 4, partitions: 2, exclusive: false };
    let err = base().mode(multi).heartbeat_timeout(Duration::from_secs(5)).build().unwrap_err();
    assert_eq!(err, ConfigError::NonExclusiveLeaseTooShort { t: Duration::from_secs(5), s: Duration::from_secs(15) });
    let ok = base().mode(multi).heartbeat_timeout(Duration::from_secs(5)).session_timeout(Duration::from_secs(3));
    assert!(ok.build().is_ok());
}

#[test]
fn secrets_never_reach_debug() {
    let cfg = base()
        .kafka("sasl.password", "hunter2")
        .kafka("ssl.key.password", "k3y")
        .kafka("sasl.oauthbearer.client.secret", "s3cret")
        .kafka("client.id", "visible")
        .build()
        .unwrap();
    for text in [format!("{cfg:?}"), format!("{:?}", cfg.resolve().unwrap())] {
        assert!(!text.contains("hunter2") && !text.contains("k3y") && !text.contains("s3cret"), "{text}");
        assert!(text.contains("visible") && text.contains("<redacted>"), "{text}");
    }
}

#[test]
fn rejects_rebalance_timeout_not_above_lease_plus_session() {
    let err = base().kafka("max.poll.interval.ms", "1000").build().unwrap_err();
    assert!(matches!(err, ConfigError::RebalanceTimeoutTooShort { .. }), "{err}");
    assert!(err.to_string().starts_with("max.poll.interval.ms (1s) must be above"), "{err}");
    assert!(base().kafka("max.poll.interval.ms", "300000").build().is_ok());
    assert!(base().membership_proof(false).kafka("max.poll.interval.ms", "1000").build().is_ok());
}

#[test]
fn rebalance_timeout_must_exceed_lease_plus_session_not_just_session() {
    // T = 5 s, S = 15 s: a value above S but not above T + S (20 s) is
    // still refused; the first value past T + S is accepted.
    let b = || base().heartbeat_timeout(Duration::from_secs(5)).session_timeout(Duration::from_secs(15));
    for ms in ["16000", "20000"] {
        let err = b().kafka("max.poll.interval.ms", ms).build().unwrap_err();
        assert_eq!(
            err,
            ConfigError::RebalanceTimeoutTooShort {
                max_poll: Duration::from_millis(ms.parse().unwrap()),
                t: Duration::from_secs(5),
                s: Duration::from_secs(15),
            },
            "max.poll.interval.ms = {ms}"
        );
    }
    assert!(b().kafka("max.poll.interval.ms", "20001").build().is_ok());
    let err = b().kafka("max.poll.interval.ms", "soon").build().unwrap_err();
    assert_eq!(err, ConfigError::NotANumber { field: "max.poll.interval.ms", value: "soon".into() });
}

// What each setter and derived value feeds: the core's configuration,
// the client's, the CLI's and the scenarios' texts (cargo-mutants found
// setters and derivations no test looked at; docs/benchmarks-log.md, "Harness power").
#[test]
fn every_setter_reaches_the_resolved_config_and_the_core() {
    let multi = Mode::MultiRole { roles: 5, partitions: 3, exclusive: true };
    let r = base()
        .heartbeat_timeout(Duration::from_secs(2))
        .session_timeout(Duration::from_secs(6))
        .heartbeat_interval(Duration::from_millis(300))
        .grace(Duration::from_millis(700))
        .membership_proof(false)
        .mode(multi)
        .assignment(Assignment::CooperativeSticky)
        .build()
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(r.heartbeat_interval, Duration::from_millis(300));
    assert_eq!(r.grace, Duration::from_millis(700));
    let core = r.core(3);
    assert_eq!((core.roles, core.partitions), (5, 3));
    assert_eq!(core.heartbeat_timeout, Duration::from_secs(2));
    assert_eq!(core.heartbeat_interval, Duration::from_millis(300));
    assert_eq!(core.grace, Duration::from_millis(700));
    assert!(!core.membership_proof);
    assert!(core.incremental, "cooperative-sticky assignment is incremental");
    let default = base().build().unwrap().resolve().unwrap();
    assert_eq!(
        default.assignment,
        Assignment::CooperativeSticky,
        "the default (neli/KAFKA.md, \"Assignment strategy\")"
    );
    assert!(default.core(1).incremental, "the default assignment is incremental");
    let range = base().assignment(Assignment::Range).build().unwrap().resolve().unwrap();
    assert!(!range.core(1).incremental, "range assignment is eager");
}

#[test]
fn modes_count_their_roles_and_partitions() {
    assert_eq!((Mode::Exclusive.roles(), Mode::Exclusive.partitions()), (1, 1));
    let multi = Mode::MultiRole { roles: 5, partitions: 3, exclusive: false };
    assert_eq!((multi.roles(), multi.partitions()), (5, 3));
}

#[test]
fn group_heartbeat_interval_is_a_tenth_of_the_session_within_bounds() {
    assert_eq!(group_heartbeat_interval(Duration::from_secs(3)), Duration::from_millis(300));
    assert_eq!(group_heartbeat_interval(Duration::from_millis(7_000)), Duration::from_millis(700));
    assert_eq!(group_heartbeat_interval(Duration::from_millis(900)), Duration::from_millis(100));
    assert_eq!(group_heartbeat_interval(Duration::from_secs(60)), Duration::from_secs(3));
}

// A member reads its own heartbeat back at most this long after writing it
// on brokers that hold a fetch for its whole wait (neli/KAFKA.md, "Defaults
// we set unless you do"): T/40, never below 10 ms nor above 100 ms.
#[test]
fn read_back_wait_is_a_fortieth_of_the_lease_within_bounds() {
    assert_eq!(read_back_wait(Duration::from_secs(1)), Duration::from_millis(25));
    assert_eq!(read_back_wait(Duration::from_secs(2)), Duration::from_millis(50));
    assert_eq!(read_back_wait(Duration::from_millis(200)), Duration::from_millis(10));
    assert_eq!(read_back_wait(Duration::from_secs(30)), Duration::from_millis(100));
    // In effect: the user's fetch.wait.max.ms if set.
    let t1 = || base().heartbeat_timeout(Duration::from_secs(1));
    assert_eq!(t1().build().unwrap().resolve().unwrap().read_back_wait(), Duration::from_millis(25));
    let set = t1().kafka("fetch.wait.max.ms", "40").build().unwrap().resolve().unwrap();
    assert_eq!(set.read_back_wait(), Duration::from_millis(40));
}

#[test]
fn assignment_names_round_trip_through_display_and_parse() {
    for a in [Assignment::Range, Assignment::CooperativeSticky] {
        assert_eq!(Assignment::parse(&a.to_string()), Ok(a));
    }
    assert_eq!(Assignment::CooperativeSticky.to_string(), "cooperative-sticky");
}

#[test]
fn the_redactor_hides_the_configurations_secret_values() {
    let r = base().kafka("sasl.password", "hunter2-secret").build().unwrap().resolve().unwrap();
    let text = r.redactor().redact("authentication with hunter2-secret failed");
    assert!(!text.contains("hunter2-secret"), "{text}");
    assert!(text.contains("authentication with"), "{text}");
}

#[test]
fn name_lengths_are_refused_just_past_their_limits() {
    // The topic is set: by default it is the group plus ".neli", 5 more.
    let at = |n: usize| base().topic("t").group("g".repeat(n)).build();
    assert!(at(249).is_ok());
    assert_eq!(
        at(250).unwrap_err().to_string(),
        format!("group '{}' is invalid: must be at most 249 characters", "g".repeat(250))
    );
    let named = |n: usize| base().name("n".repeat(n)).build();
    assert!(named(1024).is_ok());
    assert!(named(1025).unwrap_err().to_string().ends_with("must be at most 1024 bytes"));
    assert!(named(3000).is_err());
}

// The bounds `explain` states (neli/KAFKA.md, "What a configuration promises"), for goNELI's defaults (T = 5 s,
// S = 3 T) against the documented formulas, each written out here.
#[test]
fn explain_states_the_documented_bounds_of_the_defaults() {
    let e = base().build().unwrap().explain().unwrap();
    let secs = Duration::from_secs;
    let (t, s, g) = (secs(5), secs(15), Duration::ZERO);
    assert_eq!((e.heartbeat_timeout, e.session_timeout, e.grace), (t, s, g));
    assert_eq!(e.heartbeat_interval, t / 4);
    // heartbeat.interval.ms as the Kafka backend sets it: S/10 within 100 ms..3 s.
    let group_heartbeat = Duration::from_millis(1500);
    assert_eq!(e.group_heartbeat_interval, group_heartbeat);
    // failover: S (session expiry) + group heartbeat + G + T.
    assert_eq!(e.failover, s + group_heartbeat + g + t);
    assert_eq!(e.failover, Duration::from_millis(21_500));
    // handover: group heartbeat + G + T, no session expiry.
    assert_eq!(e.handover, Duration::from_millis(6_500));
    // resign hold-off: 2 S + T, the core's own value.
    assert_eq!(e.resign_hold_off, 2 * s + t);
    assert_eq!(e.resign_hold_off, base().build().unwrap().resolve().unwrap().core(1).resign_hold_off);
    // the rebalance timeout must be above T + S with the proof; librdkafka's 300 s is in effect.
    assert_eq!(e.min_rebalance_timeout, Some(secs(20)));
    assert_eq!((e.rebalance_timeout, e.rebalance_timeout_set), (secs(300), false));
    // drift: S - T + G of margin, (S - T + G) / (S + G) as a rate.
    assert_eq!(e.drift_margin, Some(secs(10)));
    assert_eq!(e.tolerated_drift_ppm, Some(666_666));
    assert_eq!(e.close_timeout, DEFAULT_CLOSE_TIMEOUT);
    assert!(e.exclusive && e.membership_proof);
}

#[test]
fn explain_uses_the_properties_in_effect_and_the_grace() {
    let ms = Duration::from_millis;
    let e = base()
        .heartbeat_timeout(ms(1000))
        .session_timeout(ms(3000))
        .grace(ms(500))
        .kafka("heartbeat.interval.ms", "250")
        .kafka("max.poll.interval.ms", "10000")
        .build()
        .unwrap()
        .explain()
        .unwrap();
    assert_eq!(e.group_heartbeat_interval, ms(250), "the user's heartbeat.interval.ms");
    assert_eq!(e.failover, ms(3000 + 250 + 500 + 1000));
    assert_eq!(e.handover, ms(250 + 500 + 1000));
    assert_eq!(e.resign_hold_off, ms(7000));
    assert_eq!(e.min_rebalance_timeout, Some(ms(4000)));
    assert_eq!((e.rebalance_timeout, e.rebalance_timeout_set), (ms(10_000), true));
    assert_eq!(e.drift_margin, Some(ms(2500)));
    assert_eq!(e.tolerated_drift_ppm, Some(714_285), "2.5 s / 3.5 s");
    let text = e.to_string();
    for line in [
        "lease T = 1s, session S = 3s, grace G = 500ms, heartbeats every 250ms, group heartbeats every 250ms (exclusive)",
        "failover on crash: within 4750ms (S for the session to expire + 250ms group heartbeat + G + T",
        "handover on close/resign: within 1750ms (250ms group heartbeat + G + T) once the Revoked handler returned \
         (close waits for it up to 10s)",
        "resign hold-off: 7s (2 S + T)",
        "rebalance timeout: must be above 4s (T + S)",
        "in effect 10s (max.poll.interval.ms)",
        "clock drift: the leader's clock may run 71.4% slow (a margin of S - T + G = 2500ms)",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    assert_eq!(text.lines().count(), 6, "{text}");
}

#[test]
fn explain_without_the_proof_or_exclusivity_says_what_it_cannot_promise() {
    let e = base().membership_proof(false).build().unwrap().explain().unwrap();
    assert_eq!(e.min_rebalance_timeout, None);
    assert!(e.to_string().contains("no requirement without the membership proof"), "{e}");
    assert!(e.to_string().contains("only while it reaches the group coordinator"), "{e}");
    let multi = Mode::MultiRole { roles: 4, partitions: 2, exclusive: false };
    let e = base().mode(multi).session_timeout(Duration::from_secs(3)).build().unwrap().explain().unwrap();
    assert_eq!((e.drift_margin, e.tolerated_drift_ppm), (None, None));
    assert!(e.to_string().contains("non-exclusive mode"), "{e}");
    let invalid = Config { heartbeat_timeout: Duration::ZERO, ..base().build().unwrap() };
    assert_eq!(invalid.explain(), Err(ConfigError::Zero { field: "heartbeat_timeout", value: Duration::ZERO }));
}

#[test]
fn static_membership_needs_a_grace_of_at_least_t_and_the_proof() {
    let t = Duration::from_secs(1);
    let static_member = || base().heartbeat_timeout(t).kafka("group.instance.id", "billing-1");
    let cause = "static membership (group.instance.id)";
    let err = static_member().build().unwrap_err();
    assert_eq!(
        err,
        ConfigError::GraceBelowLease { cause, grace: Duration::ZERO, t, suggest: Duration::from_millis(1100) }
    );
    assert!(err.to_string().contains("with static membership (group.instance.id): the coordinator can hand"), "{err}");
    for key in [" group.instance.id", "GROUP.INSTANCE.ID"] {
        let err = base().heartbeat_timeout(t).kafka(key, "x").build().unwrap_err();
        assert!(matches!(err, ConfigError::GraceBelowLease { .. }), "{key:?}: {err:?}");
    }
    assert_eq!(
        static_member().grace(Duration::from_millis(1100)).membership_proof(false).build().unwrap_err(),
        ConfigError::ProofRequired { cause }
    );
    let ok = static_member().grace(Duration::from_millis(1100)).build().unwrap().resolve().unwrap();
    assert_eq!(ok.kafka_config.get("group.instance.id").map(String::as_str), Some("billing-1"));
    // Under the consumer protocol the protocol's rule is named.
    let both = static_member().group_protocol(GroupProtocol::Consumer).build().unwrap_err();
    assert!(matches!(both, ConfigError::GraceBelowLease { cause: "group protocol consumer", .. }), "{both:?}");
}

/// The consumer protocol with T = 1 s and the smallest grace it takes.
fn consumer() -> ConfigBuilder {
    base()
        .heartbeat_timeout(Duration::from_secs(1))
        .group_protocol(GroupProtocol::Consumer)
        .grace(Duration::from_millis(1100))
}

#[test]
fn consumer_protocol_refuses_each_property_librdkafka_refuses_by_name_and_protocol() {
    for (property, _) in CONSUMER_PROTOCOL_REFUSED {
        for key in [property.to_string(), format!(" {}", property.to_uppercase())] {
            let err = consumer().kafka(key.clone(), "3000").build().unwrap_err();
            assert!(
                matches!(&err, ConfigError::RefusedUnderProtocol { property: p, protocol: GroupProtocol::Consumer, .. } if p.as_str() == *property),
                "{key:?}: {err:?}"
            );
            assert_eq!(err.field(), *property);
            let text = err.to_string();
            assert!(text.starts_with(&format!("cannot set '{property}' with group protocol consumer: ")), "{text}");
        }
        // The classic protocol takes them (session.timeout.ms within the rules).
        let classic = base().kafka(*property, "30000").build();
        assert!(classic.is_ok() || *property == "group.protocol.type", "{property}: {classic:?}");
    }
    let text = consumer().session_timeout(Duration::from_secs(6)).build().unwrap_err().to_string();
    assert!(text.contains("broker_session_timeout"), "the refusal says what to do instead: {text}");
    for forced in ["group.remote.assignor", "partition.assignment.strategy", "group.protocol"] {
        assert_eq!(consumer().kafka(forced, "x").build().unwrap_err(), ConfigError::ForcedKey(forced.into()));
    }
}

#[test]
fn consumer_protocol_needs_a_grace_of_at_least_t_and_the_proof() {
    let t = Duration::from_secs(1);
    let err = consumer().grace(Duration::ZERO).build().unwrap_err();
    assert_eq!(
        err,
        ConfigError::GraceBelowLease {
            cause: "group protocol consumer",
            grace: Duration::ZERO,
            t,
            suggest: Duration::from_millis(1100)
        }
    );
    assert_eq!(err.field(), "grace");
    let text = err.to_string();
    for part in [
        "grace (0ns) must be at least heartbeat_timeout + 10% (1.1s, with T = 1s) with group protocol consumer",
        "without the leader's session expiring",
        "clocks running apart",
    ] {
        assert!(text.contains(part), "{part:?} missing from {text}");
    }
    for below in [t, Duration::from_millis(1099)] {
        let refused = consumer().grace(below).build();
        assert!(matches!(refused, Err(ConfigError::GraceBelowLease { .. })), "{below:?}: {refused:?}");
    }
    assert!(consumer().grace(Duration::from_millis(1100)).build().is_ok(), "T + 10% is the least");
    let err = consumer().membership_proof(false).build().unwrap_err();
    assert_eq!(err, ConfigError::ProofRequired { cause: "group protocol consumer" });
    assert_eq!(err.field(), "membership_proof");
    // The classic protocol keeps G = 0 and the proof optional.
    assert!(base().build().is_ok() && base().membership_proof(false).build().is_ok());
}

#[test]
fn consumer_protocol_assumes_the_brokers_session_timeout_and_sets_no_client_one() {
    let r = consumer().build().unwrap().resolve().unwrap();
    assert_eq!(r.session_timeout, KAFKA_CONSUMER_SESSION_TIMEOUT);
    assert!(!r.kafka_config.contains_key("session.timeout.ms"), "{:?}", r.kafka_config.keys());
    assert_eq!(r.group_heartbeat_interval(), KAFKA_CONSUMER_HEARTBEAT_INTERVAL);
    assert!(r.core(1).incremental, "the consumer protocol is incremental under either broker assignor");
    let range = consumer().assignment(Assignment::Range).build().unwrap().resolve().unwrap();
    assert!(range.core(1).incremental);
    let stated = consumer().broker_session_timeout(Duration::from_secs(10)).build().unwrap().resolve().unwrap();
    assert_eq!(stated.session_timeout, Duration::from_secs(10));
    // T < S still holds in exclusive mode, against the broker's S.
    let err = consumer().broker_session_timeout(Duration::from_millis(900)).build().unwrap_err();
    assert!(matches!(err, ConfigError::ExclusiveLeaseTooLong { .. }), "{err:?}");
    let err = consumer().broker_session_timeout(Duration::ZERO).build().unwrap_err();
    assert_eq!(err, ConfigError::Zero { field: "broker_session_timeout", value: Duration::ZERO });
    let err = base().broker_session_timeout(Duration::from_secs(10)).build().unwrap_err();
    assert_eq!(err, ConfigError::BrokerSessionTimeoutUnderClassic { s: Duration::from_secs(10) });
    assert_eq!(err.field(), "broker_session_timeout");
    assert!(err.to_string().contains("only for group protocol consumer"), "{err}");
}

#[test]
fn consumer_protocol_drift_margin_is_the_grace_beyond_the_lease() {
    let e = consumer().grace(Duration::from_millis(1100)).build().unwrap().explain().unwrap();
    assert_eq!(e.drift_margin, Some(Duration::from_millis(100)));
    // 100 ms of a wait of 1.1 s.
    assert_eq!(e.tolerated_drift_ppm, Some(90_909));
    assert!(e.to_string().contains("may run 9.0% slow (a margin of G - T = 100ms)"), "{e}");
    let wider = consumer().grace(Duration::from_millis(1250)).build().unwrap().explain().unwrap();
    assert_eq!((wider.drift_margin, wider.tolerated_drift_ppm), (Some(Duration::from_millis(250)), Some(200_000)));
}

#[test]
fn group_protocol_names_parse_and_print() {
    for p in [GroupProtocol::Classic, GroupProtocol::Consumer] {
        assert_eq!(GroupProtocol::parse(p.name()), Ok(p));
        assert_eq!(p.to_string(), p.name());
    }
    assert_eq!(GroupProtocol::default(), GroupProtocol::Classic);
    let err = GroupProtocol::parse("CONSUMER").unwrap_err().to_string();
    assert_eq!(err, "\"CONSUMER\" is not a group protocol (expected \"classic\" or \"consumer\")");
}

#[test]
fn heartbeat_interval_property_must_be_a_positive_number_of_milliseconds() {
    let err = base().kafka("heartbeat.interval.ms", "soon").build().unwrap_err();
    assert_eq!(err, ConfigError::NotANumber { field: "heartbeat.interval.ms", value: "soon".into() });
    let err = base().kafka("heartbeat.interval.ms", "0").build().unwrap_err();
    assert_eq!(err, ConfigError::Zero { field: "heartbeat.interval.ms", value: Duration::ZERO });
    let err = base().membership_proof(false).kafka("max.poll.interval.ms", "soon").build().unwrap_err();
    assert_eq!(err, ConfigError::NotANumber { field: "max.poll.interval.ms", value: "soon".into() });
}

#[test]
fn default_name_starts_with_the_kernels_host_name() {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_default();
    if !host.is_empty() {
        assert!(default_name().starts_with(&format!("{host}_")), "{} vs host {host}", default_name());
    }
}
