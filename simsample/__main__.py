from simsample.cli import main

main()
