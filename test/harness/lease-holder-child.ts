/**
 * A process that takes a conversation's lease and keeps renewing it until it
 * is killed: the owner a cluster test kills with -9. Arguments: Redis URL,
 * key prefix, conversation id, lease ms. Prints `acquired <fence>` once it
 * holds the lease.
 */
import { ClusterKeys } from "../../src/cluster/cluster-keys.js";
import { OwnershipLeases } from "../../src/cluster/ownership-lease.js";
import { connectRedis } from "../../src/cluster/redis-client.js";
import { createLogger } from "../../src/logging/logger.js";

const [url, prefix, conversationId, leaseMs] = process.argv.slice(2) as [string, string, string, string];
const log = createLogger("warn");
const redis = await connectRedis(url, { name: "lease-holder-child", log });
const leases = new OwnershipLeases(redis, { instanceId: `child-${process.pid}`, leaseMs: Number(leaseMs), keys: new ClusterKeys(prefix), log });
const outcome = await leases.acquire(conversationId, { onLost: (reason) => console.log(`lost ${reason}`) });
if (!outcome.acquired) {
  console.log(`refused ${outcome.owner.instanceId}`);
  process.exit(1);
}
console.log(`acquired ${outcome.lease.fence}`);
// The renewal timer is unref'd (it must not keep a server alive); this keeps the child alive until it is killed.
setInterval(() => {}, 1 << 30);
