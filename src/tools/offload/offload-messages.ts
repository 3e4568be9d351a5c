/** What the main thread and the offload worker say to each other: one request, one reply, per job. */
export interface JobRequest {
  id: number;
  job: string;
  input: unknown;
}

export type JobReply = { id: number; ok: true; output: unknown } | { id: number; ok: false; error: string };
