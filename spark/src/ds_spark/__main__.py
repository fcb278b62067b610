from ds_spark.cli import main

main()
