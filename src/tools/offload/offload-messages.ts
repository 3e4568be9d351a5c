/**
 * What the main thread and the offload worker say to each other, per job:
 * a request; `started` once the job's code is loaded and it begins (its
 * deadline runs from there); then the result or the error's message.
 */
export interface JobRequest {
  id: number;
  job: string;
  input: unknown;
}

export type JobReply =
  | { id: number; started: true }
  | { id: number; ok: true; output: unknown }
  | { id: number; ok: false; error: string };
