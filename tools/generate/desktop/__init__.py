"""Desktop tasks: families of tasks on real desktop applications, checked on the home folder and verified by replay."""
