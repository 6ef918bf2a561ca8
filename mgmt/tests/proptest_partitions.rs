//! Property: any set of partitions written as a partitions file
//! (`Partitions::to_text`) reads back the same, and the tables it gives
//! agree with the rule "a shared partition, not two limited members".

use mgmt::partition::{
    Member, Membership, NodeFacts, Partition, PartitionKey, Partitions, may_talk, parse,
};
use proptest::prelude::*;

fn member() -> impl Strategy<Value = Member> {
    prop_oneof![
        Just(Member::All),
        Just(Member::AllHosts),
        Just(Member::AllRouters),
        Just(Member::Manager),
        (1u64..8).prop_map(Member::Node),
    ]
}

fn membership() -> impl Strategy<Value = Membership> {
    prop_oneof![Just(Membership::Full), Just(Membership::Limited)]
}

fn partitions() -> impl Strategy<Value = Partitions> {
    (
        prop::collection::btree_set(1u16..0x7FFF, 0..6),
        prop::collection::vec(prop::collection::vec((member(), membership()), 0..5), 7),
    )
        .prop_map(|(keys, members)| {
            let mut list: Vec<Partition> = keys
                .into_iter()
                .zip(members.iter().cloned())
                .map(|(k, m)| Partition {
                    name: format!("p{k}"),
                    key: PartitionKey::new(k).unwrap(),
                    members: m,
                })
                .collect();
            list.push(Partition {
                name: "Default".into(),
                key: PartitionKey::DEFAULT,
                members: members[6].clone(),
            });
            Partitions { list }
        })
}

proptest! {
    #[test]
    fn a_written_file_reads_back_the_same(p in partitions()) {
        prop_assert_eq!(parse(&p.to_text()), Ok(p));
    }

    #[test]
    fn two_hosts_talk_exactly_when_they_share_a_partition_with_a_full_member(
        p in partitions(), a in 1u64..8, b in 1u64..8,
    ) {
        let host = |i| NodeFacts { identity: i, router: false, manager: false };
        // The rule, computed from the file's entries directly.
        let how = |part: &Partition, i: u64| -> Option<Membership> {
            part.members.iter().filter(|(w, _)| matches!(w, Member::All | Member::AllHosts)
                || *w == Member::Node(i)).map(|(_, h)| *h).reduce(Membership::max)
        };
        let expected = p.list.iter().any(|part| match (how(part, a), how(part, b)) {
            (Some(x), Some(y)) => x == Membership::Full || y == Membership::Full,
            _ => false,
        });
        prop_assert_eq!(may_talk(&p.table_of(&host(a)), &p.table_of(&host(b))), expected);
    }
}
