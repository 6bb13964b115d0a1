/** Runs `cmd args` in `cwd` in a process group of its own, passing SIGINT, SIGTERM and SIGHUP on to it; the wrapper exits with the command. */
export declare function serve(cmd: string, args: readonly string[], cwd: string): Promise<never>;
