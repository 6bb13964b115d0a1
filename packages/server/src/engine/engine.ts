/**
 * The seam between one process and a cluster. The engine carries every publish to the
 * nodes whose sessions subscribe; each node then delivers locally through its
 * subscription index. The memory engine is the single-process case.
 */

export type DeliveryHandler = (channel: string, json: string) => void;

export interface Engine {
  /** Starts delivering published messages to `handler` on this node. */
  start(handler: DeliveryHandler): Promise<void>;
  /** Publishes an already serialized message on `channel` to every node. */
  publish(channel: string, json: string): void;
  /** Tells the engine this node now has (or no longer has) subscribers for `name`. */
  interest(name: string, present: boolean): void;
  close(): Promise<void>;
}
