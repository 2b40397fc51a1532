package fnconfig

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// CommandLine handles the command line of a function's executable (the bootstrap Lambda runs), for a person who
// runs it by hand. Lambda starts it without arguments: CommandLine then returns exit false and main goes on to
// lambda.Start. With -h, -help or --help it prints what the executable is, about (one sentence) and how to run the
// function without Lambda (logicalID is its name in template.yaml) to stdout and returns 0; with any other argument
// it prints the error and the usage to stderr and returns 2.
func CommandLine(args []string, logicalID, about string, stdout, stderr io.Writer) (code int, exit bool) {
	if len(args) == 0 {
		return 0, false
	}
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage(logicalID, about))
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "bootstrap: %v\n\n%s", err, usage(logicalID, about))
		return 2, true
	}
	return 0, false // only "--": as without arguments
}

// usage is the text of --help.
func usage(logicalID, about string) string {
	return fmt.Sprintf(`usage: bootstrap [--help]

%s (%s in template.yaml).

This is a Lambda function's executable for the provided.al2023 runtime: Lambda starts it without arguments and it
serves invocations through the Lambda Runtime API ($AWS_LAMBDA_RUNTIME_API), configured by the environment the
template gives it. Started by hand, outside Lambda, it has no Runtime API to serve. To run the function locally:

  bin/local                                            the whole stack, this function in-process
  bin/local invoke %s --event FILE --env-vars events/env.json
                                                       this function once, as sam local invoke does

flags:
  -h, --help   print this and exit
`, about, logicalID, logicalID)
}
